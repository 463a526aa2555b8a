"""The management API's side of the store: the SQL of collections, jobs, calendars, history,
API keys, run-now requests and the engine's status as the API reports it, and the API's
transactions (`access`)."""
