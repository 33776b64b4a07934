"""One folder per server (uvicorn, gunicorn, granian): what `python -m serve` starts an app on.

Each folder's package says which interfaces it serves (INTERFACES), which settings of other
servers it refuses (`refused`, which also validates its own) and how it serves an app factory
(`serve`); its settings module holds its own knobs only. A new server is a new folder here plus a
values entry that names it.
"""
