"""The one entry point of every target (`python -m serve APP`): an app (a folder under
services/apps/) on a server (a folder under services/servers/, named by LAB_SERVER), with the LAB_*
knobs of both. The image, the local launcher and the Helm chart all run it."""
