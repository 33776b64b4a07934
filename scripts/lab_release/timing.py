"""How long run-lab waits for what, and how often it looks (read at call time: tests shorten them)."""

READY_TIMEOUT_S = 600
POLL_S = 2.0
PROGRESS_EVERY_S = 30.0
# After activeDeadlineSeconds the Job controller fails the Job; allow it this long to say so.
DEADLINE_GRACE_S = 60
# An image that cannot be pulled does not come by waiting 10 minutes: say so after this long.
PULL_GRACE_S = 60.0
