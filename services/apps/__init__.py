"""One folder per app `python -m serve` can serve: the lab's FastAPI app, the lab's Flask app, and
a team's app loaded by name. An app knows nothing of the server that runs it: each folder's
package offers its factories per interface (FACTORIES), what LAB_RELOAD watches (RELOAD_DIRS) and
`check()`. A new app is a new folder here plus a values entry that names it.
"""
