"""Signals other apps listen to, so annotation never imports them.

claim_accepted is sent inside the accepting transaction: whatever a receiver writes (such as
a webhook delivery to queue) is committed with the acceptance or not at all.
"""

from django.dispatch import Signal

# Sent with claim=<Claim> when a claim joins the dataset.
claim_accepted = Signal()
