"""mltd's application layer: renderers now; settings, jobs, workers and channel clients as they come."""
