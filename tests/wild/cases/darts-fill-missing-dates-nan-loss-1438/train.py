series_dow = TimeSeries.from_dataframe(df1, "Date", " Close", fill_missing_dates=True, freq="B")
