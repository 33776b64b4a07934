"""The team's own app, given by name (LAB_APP), served in the configurations the lab compares, with
the lab's control paths ahead of it and each request's CPU measured around it."""
