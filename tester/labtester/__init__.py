"""The lab's instrument: calibrates, loads, scrapes, models and reports on the targets."""
