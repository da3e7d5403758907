"""Annotation's screens, one module per feature: site.py (site-wide pages), panel.py (the
control panel), phase1.py, evidence.py, editing.py (what every editor shares), revisions.py,
suggestions.py, training.py, manage.py (managers' pages). Access checks: annotation/access.py."""
