"""Writes and business rules of the annotation workflow, one module per concern; callers use this package.

- `errors`: the refusals every service raises.
- `projects`: creating projects, adding items, membership checks, gold items.
- `project_settings`: settings and guidelines, the labeling-policy lock, the change log.
- `members`: invitations, accounts made from them, removing members.
- `claims`: leasing items to annotators (one at a time or a queue ahead), releasing and skipping.
- `labeling`: storing labels and moving items through the state machine.
- `decisions`: adjudication and override, each with a rationale.
- `bulk`: actions on a selection of items, a chunk per transaction.

Each module uses only those listed before it.
"""

from .bulk import (
    BULK_ACTIONS,
    BULK_CHUNK,
    BULK_LIMIT,
    EXCLUDE,
    MARK_GOLD,
    MAX_PRIORITY_STEP,
    PRIORITY,
    REOPEN,
    BulkResult,
    SelectionTooLarge,
    bulk_apply,
)
from .claims import (
    QUEUE_AHEAD,
    Claim,
    capacity_left,
    claim_queue,
    next_task,
    release_tasks,
    skip_task,
)
from .decisions import (
    adjudicate,
    override,
)
from .errors import (
    InvalidSubmission,
    NotAllowed,
    WorkflowError,
)
from .labeling import (
    SubmitResult,
    submit_label,
    votes_for,
)
from .members import (
    INVITATION_DAYS,
    UNKNOWN_INVITATION,
    AlreadyMember,
    InvitationUnusable,
    UnknownInvitation,
    accept_invitation,
    create_account,
    create_invitation,
    open_invitation,
    remove_member,
    revoke_invitation,
    set_password_with_invitation,
    sign_up_with_invitation,
)
from .project_settings import (
    SETTING_FIELDS,
    SettingRefused,
    check_aggregation_rule,
    check_setting_values,
    guidelines_seen,
    log_change,
    policy_lock,
    update_project,
)
from .projects import (
    RoleConflict,
    add_items,
    add_member,
    check_project_request,
    copy_new_items,
    create_project,
    gold_refusal,
    is_member,
    mark_gold,
    populate_items,
    role_conflict,
)

__all__ = [
    "AlreadyMember",
    "RoleConflict",
    "role_conflict",
    "BULK_ACTIONS",
    "BULK_CHUNK",
    "BULK_LIMIT",
    "BulkResult",
    "Claim",
    "EXCLUDE",
    "INVITATION_DAYS",
    "InvalidSubmission",
    "InvitationUnusable",
    "MARK_GOLD",
    "MAX_PRIORITY_STEP",
    "NotAllowed",
    "PRIORITY",
    "QUEUE_AHEAD",
    "REOPEN",
    "SETTING_FIELDS",
    "SelectionTooLarge",
    "SettingRefused",
    "SubmitResult",
    "UNKNOWN_INVITATION",
    "UnknownInvitation",
    "WorkflowError",
    "accept_invitation",
    "add_items",
    "add_member",
    "adjudicate",
    "bulk_apply",
    "capacity_left",
    "check_aggregation_rule",
    "check_project_request",
    "check_setting_values",
    "claim_queue",
    "copy_new_items",
    "create_account",
    "create_invitation",
    "create_project",
    "gold_refusal",
    "guidelines_seen",
    "is_member",
    "log_change",
    "mark_gold",
    "next_task",
    "open_invitation",
    "override",
    "policy_lock",
    "populate_items",
    "release_tasks",
    "remove_member",
    "revoke_invitation",
    "set_password_with_invitation",
    "sign_up_with_invitation",
    "skip_task",
    "submit_label",
    "update_project",
    "votes_for",
]
