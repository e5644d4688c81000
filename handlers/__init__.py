"""The edges of mltd: the command line now; the web app, Slack and GitHub receivers as they come."""
