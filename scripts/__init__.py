"""Set-up commands run as `python -m scripts.<name>` from the repository root."""
