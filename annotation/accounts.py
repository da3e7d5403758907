"""Managing annotator accounts: bulk creation, roles, phase qualifications and quotas.

Every change is written to the audit log with the manager who made it. New accounts start in
training: a training phase (P1-P3) is given without a passed test only as a waiver with a
reason (annotation/training.grant, the one path for adding phases).
"""

from __future__ import annotations

import csv
import io
import secrets

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation import assignment, training
from annotation.boundary import shown, text_refusal
from annotation.csvfiles import csv_writer
from annotation.models import PhaseQuota, Task, User
from annotation.usernames import by_skeleton, normalised, skeleton, username_problem
from annotation.vocabulary import BLIND_PHASES
from annotation.workflow import audit

MAX_ACCOUNTS_PER_UPLOAD = 500


class AccountError(ValueError):
    """A bulk upload or change that cannot be made; the message says which line or field."""


def parse_usernames(text: str) -> list[str]:
    """Usernames from pasted or uploaded CSV: the first column of each row, header optional.

    Names are stored in NFKC form; a name like an existing one, or like another in the same
    upload, is refused (annotation/usernames.py).
    """
    names: list[str] = []
    problems: list[str] = []
    taken = by_skeleton(User.objects.values_list("username", flat=True))
    in_upload: dict[str, str] = {}
    try:
        rows = list(enumerate(csv.reader(io.StringIO(text)), start=1))
    except csv.Error as exc:
        raise AccountError(f"not valid CSV ({exc})") from exc
    for number, row in rows:
        if not row or not row[0].strip():
            continue
        if refusal := text_refusal(row[0], limit=1_000):
            problems.append(f"line {number}: {refusal.message}")
            continue
        name = normalised(row[0])
        if number == 1 and name.lower() == "username":
            continue
        if skeleton(name) in in_upload:
            problems.append(f"line {number}: {name!r} appears twice (or looks like another)")
        elif problem := username_problem(name, taken):
            problems.append(f"line {number}: {shown(problem, 300)}")
        else:
            names.append(name)
            in_upload[skeleton(name)] = name
    if len(names) > MAX_ACCOUNTS_PER_UPLOAD:
        problems.append(f"at most {MAX_ACCOUNTS_PER_UPLOAD} accounts per upload")
    if problems:
        raise AccountError("; ".join(problems))
    if not names:
        raise AccountError("no usernames found")
    return names


@transaction.atomic
def create_annotators(
    usernames: list[str],
    manager: User,
    phases: list[int] | None = None,
    waiver_reason: str = "",
) -> list[tuple[str, str]]:
    """Create annotator accounts with one-time passwords; returns (username, password).

    The accounts start in training: no phase unless given, and a training phase only with a
    waiver reason. The passwords are for the manager to hand over once: nothing keeps them,
    and each new annotator must choose their own at first sign-in.
    """
    created = []
    for name in usernames:
        password = one_time_password()
        user = User(
            username=name,
            role=User.Role.ANNOTATOR,
            qualified_phases=[],
            must_change_password=True,
        )
        user.set_password(password)
        user.save()
        try:
            user.qualified_phases = training.grant(user, phases or [], manager, waiver_reason)
        except training.TrainingRefused as exc:
            raise AccountError(str(exc)) from exc
        user.save(update_fields=["qualified_phases"])
        created.append((name, password))
    audit(manager, "accounts", f"created {len(created)} annotator account(s)", usernames=usernames)
    return created


def one_time_password() -> str:
    """12 random characters (72 bits) from the URL-safe alphabet, starting with a letter or
    digit: a spreadsheet would read a leading - as a formula, and the CSV would have to
    neutralise it (annotation/csvfiles.py), changing the password shown."""
    password = secrets.token_urlsafe(9)
    if not password[0].isalnum():
        password = secrets.choice("abcdefghijkmnpqrstuvwxyz23456789") + password[1:]
    return password


def one_time_passwords_csv(created: list[tuple[str, str]]) -> str:
    """The new accounts as CSV (username, password), for the manager to download once."""
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(["username", "password"])
    writer.writerows(created)
    return out.getvalue()


def phases_a_role_may_hold(
    role: str, phases: list[int], *, researcher_annotates: bool = False
) -> list[int]:
    """The qualifications an account of `role` may keep: researchers none unless a manager
    gives them phases explicitly; managers no blind phase unless MANAGERS_TAKE_BLIND_TASKS."""
    wanted = sorted({int(p) for p in phases})
    if role == User.Role.RESEARCHER and not researcher_annotates:
        return []
    if role == User.Role.MANAGER and not settings.MANAGERS_TAKE_BLIND_TASKS:
        return [p for p in wanted if p not in BLIND_PHASES]
    return wanted


def release_work_the_account_may_not_hold(
    user: User, manager: User, *, role_changed: bool
) -> list[Task]:
    """Release the open tasks `user` may no longer hold: every blind task when their role
    changed (what they may read changed with it), and tasks of phases they are no longer
    qualified for. Drafts stay on the released tasks; fresh copies go back to the pool.
    Returns the released tasks."""
    held = Task.objects.filter(annotator=user).held().order_by("pk")
    released = []
    for task in held:
        if (role_changed and task.phase in BLIND_PHASES) or not user.is_qualified_for(task.phase):
            assignment.release_task(task, manager)
            released.append(task)
    return released


@transaction.atomic
def update_account(
    user: User,
    manager: User,
    *,
    role: str,
    phases: list[int],
    quotas: dict[int, int | None],
    active: bool,
    waiver_reason: str = "",
    researcher_annotates: bool = False,
) -> list[str]:
    """Change one account; records what changed in the audit log. Returns warnings for the
    manager (tasks released, a researcher allowed to annotate)."""
    if user.is_superuser and not manager.is_superuser:
        raise AccountError("only a superuser can change a superuser's account")
    if user == manager and (not active or role != User.Role.MANAGER):
        raise AccountError("you cannot remove your own manager role or deactivate yourself")
    before = {
        "role": user.role,
        "phases": sorted(user.qualified_phases),
        "active": user.is_active,
        "quotas": {q.phase: q.limit for q in user.quotas.all()},
    }
    role_changed = role != user.role
    # The role decides which phases may be held at all; only those need a training waiver.
    allowed = phases_a_role_may_hold(role, phases, researcher_annotates=researcher_annotates)
    try:
        granted = training.grant(user, allowed, manager, waiver_reason)
    except training.TrainingRefused as exc:
        raise AccountError(str(exc)) from exc
    user.role = role
    user.qualified_phases = granted
    user.is_active = active
    user.save()
    released = release_work_the_account_may_not_hold(user, manager, role_changed=role_changed)
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
    return role_warnings(user, released, dropped=sorted(set(phases) - set(user.qualified_phases)))


def role_warnings(user: User, released: list[Task], dropped: list[int]) -> list[str]:
    warnings = []
    if released:
        numbers = ", ".join(str(t.pk) for t in released)
        warnings.append(
            f"{user.username} no longer holds task(s) {numbers}: they went back to the pool "
            "for someone else, and the drafts stay on the released tasks."
        )
    if dropped:
        names = ", ".join(f"P{p}" for p in dropped)
        warnings.append(f"A {user.role} account may not hold {names}; those were not kept.")
    if user.role == User.Role.RESEARCHER and user.qualified_phases:
        names = ", ".join(f"P{p}" for p in user.qualified_phases)
        warnings.append(
            f"{user.username} is a researcher who may now take annotation tasks ({names}). "
            "Claims they may check blind disappear from their claims API and pages until "
            "the claims leave the workflow; verdicts they read before are not forgotten."
        )
    return warnings


class StaffPasswordLength:
    """Django password validator: accounts that see more than their own tasks (managers,
    researchers, admin staff) need a longer password than annotators (settings:
    STAFF_PASSWORD_MIN_LENGTH, 12 by default; annotators keep Django's 8)."""

    def __init__(self, min_length: int = 12):
        self.min_length = min_length

    @staticmethod
    def is_staff(user) -> bool:
        if user is None:
            return False
        return bool(
            user.is_staff
            or user.is_superuser
            or getattr(user, "role", User.Role.ANNOTATOR) != User.Role.ANNOTATOR
        )

    def validate(self, password: str, user=None) -> None:
        if self.is_staff(user) and len(password) < self.min_length:
            raise ValidationError(
                f"Staff passwords need at least {self.min_length} characters.",
                code="password_too_short",
            )

    def get_help_text(self) -> str:
        return f"Managers, researchers and admin staff need at least {self.min_length} characters."
