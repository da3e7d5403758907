"""Managing annotator accounts: bulk creation, roles, phase qualifications and quotas.

Every change is written to the audit log with the manager who made it.
"""

from __future__ import annotations

import csv
import io
import re
import secrets

from django.db import transaction

from annotation.models import PhaseQuota, User
from annotation.workflow import audit

_USERNAME = re.compile(r"^[\w.@+-]{1,150}$")
MAX_ACCOUNTS_PER_UPLOAD = 500


class AccountError(ValueError):
    """A bulk upload or change that cannot be made; the message says which line or field."""


def parse_usernames(text: str) -> list[str]:
    """Usernames from pasted or uploaded CSV: the first column of each row, header optional."""
    names: list[str] = []
    problems: list[str] = []
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        if not row or not row[0].strip():
            continue
        name = row[0].strip()
        if number == 1 and name.lower() == "username":
            continue
        if not _USERNAME.match(name):
            problems.append(f"line {number}: {name!r} is not a valid username")
        elif name in names:
            problems.append(f"line {number}: {name!r} appears twice")
        else:
            names.append(name)
    if len(names) > MAX_ACCOUNTS_PER_UPLOAD:
        problems.append(f"at most {MAX_ACCOUNTS_PER_UPLOAD} accounts per upload")
    taken = set(User.objects.filter(username__in=names).values_list("username", flat=True))
    problems.extend(f"{name!r} already has an account" for name in names if name in taken)
    if problems:
        raise AccountError("; ".join(problems))
    if not names:
        raise AccountError("no usernames found")
    return names


@transaction.atomic
def create_annotators(
    usernames: list[str], manager: User, phases: list[int] | None = None
) -> list[tuple[str, str]]:
    """Create annotator accounts with one-time passwords; returns (username, password).

    The passwords are for the manager to hand over once: nothing keeps them, and each new
    annotator must choose their own at first sign-in.
    """
    created = []
    for name in usernames:
        password = secrets.token_urlsafe(9)
        user = User(
            username=name,
            role=User.Role.ANNOTATOR,
            qualified_phases=phases or [1, 2, 3],
            must_change_password=True,
        )
        user.set_password(password)
        user.save()
        created.append((name, password))
    audit(manager, "accounts", f"created {len(created)} annotator account(s)", usernames=usernames)
    return created


def one_time_passwords_csv(created: list[tuple[str, str]]) -> str:
    """The new accounts as CSV (username, password), for the manager to download once."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["username", "password"])
    writer.writerows(created)
    return out.getvalue()


@transaction.atomic
def update_account(
    user: User,
    manager: User,
    *,
    role: str,
    phases: list[int],
    quotas: dict[int, int | None],
    active: bool,
) -> None:
    """Change one account; records what changed in the audit log."""
    if user == manager and (not active or role != User.Role.MANAGER):
        raise AccountError("you cannot remove your own manager role or deactivate yourself")
    before = {
        "role": user.role,
        "phases": sorted(user.qualified_phases),
        "active": user.is_active,
        "quotas": {q.phase: q.limit for q in user.quotas.all()},
    }
    user.role = role
    user.qualified_phases = sorted(set(phases))
    user.is_active = active
    user.save()
    for phase, limit in quotas.items():
        if limit is None:
            PhaseQuota.objects.filter(annotator=user, phase=phase).delete()
        else:
            PhaseQuota.objects.update_or_create(
                annotator=user, phase=phase, defaults={"limit": limit}
            )
    after = {
        "role": user.role,
        "phases": user.qualified_phases,
        "active": user.is_active,
        "quotas": {q.phase: q.limit for q in user.quotas.all()},
    }
    changed = {k: [before[k], after[k]] for k in after if before[k] != after[k]}
    if changed:
        audit(
            manager,
            "account",
            f"changed {user.username}: {', '.join(changed)}",
            user=user.username,
            changes={k: [str(v[0]), str(v[1])] for k, v in changed.items()},
        )


@transaction.atomic
def qualify(user: User, phase: int, manager: User) -> None:
    """Add one phase to an account's qualifications (the stuck-work fix of the dashboard)."""
    if not user.is_active:
        raise AccountError(f"{user.username} is deactivated; activate the account first")
    if int(phase) in user.qualified_phases:
        return
    user.qualified_phases = sorted({*user.qualified_phases, int(phase)})
    user.save(update_fields=["qualified_phases"])
    audit(manager, "account", f"qualified {user.username} for phase {phase}", user=user.username)
