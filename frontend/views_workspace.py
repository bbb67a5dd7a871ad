"""A project's workspace for researchers: its settings and guidelines, its members and invitation links; the public
invitation page; and the guidelines panel annotators see on their work pages.

Every change goes through annotation.services, which applies the workflow's rules and records it in the project's
change log. Every action is a POST form with a CSRF token that works without JavaScript.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model, login, update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import SetPasswordForm, UserCreationForm
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from annotation import selectors, services
from annotation.models import AnnotationProject, Invitation, ProjectChange, ProjectMember
from grading.proofs.subject import PROOF_GRADE

from .rendering import render_markdown


def _researcher_project(user, project_id: int) -> AnnotationProject:
    """The project for the researchers of its workspace and admins; a 404 for everyone else (as on the dashboard)."""
    project = AnnotationProject.objects.select_related("dataset").filter(pk=project_id).first()
    if project is None or not selectors.researches(project, user):
        raise Http404("No such project.")
    return project


# ---------------------------------------------------------------- guidelines panel (annotators)


@lru_cache(maxsize=128)
def _rendered(text: str) -> str:
    return render_markdown(text)


def guidelines_panel(project: AnnotationProject, user, *, back_to: str) -> dict | None:
    """What the guidelines panel of a work page shows, or None when the project has neither a description nor
    guidelines. It opens by itself while the member has not acknowledged the current version."""
    guidelines = selectors.guidelines_for(project, user)
    if not guidelines["text"] and not guidelines["description"]:
        return None
    return {
        **guidelines,
        "html": _rendered(guidelines["text"]) if guidelines["text"] else "",
        "description_html": _rendered(guidelines["description"]) if guidelines["description"] else "",
        "ack_url": reverse("project-guidelines-seen", args=[project.pk]),
        "back_to": back_to,
    }


def work_url(project: AnnotationProject, role: str) -> str:
    """Where a member of the project works: labeling, proof grading or the conflict queue."""
    if project.kind == PROOF_GRADE:
        return reverse("proof-home")
    if role == ProjectMember.Role.ADJUDICATOR:
        return reverse("annotation-conflicts", args=[project.pk])
    return reverse("annotation-label", args=[project.pk])


@login_required
@require_POST
def guidelines_seen(request, project_id: int):
    """A member acknowledges the guidelines version they were shown. Answers JSON to the page's script, and
    sends a browser without JavaScript back to where it came from."""
    project = get_object_or_404(AnnotationProject, pk=project_id)
    if not services.is_member(project, request.user):
        raise Http404("No such project.")
    try:
        version = int(request.POST.get("version", ""))
    except ValueError:
        version = 0  # records nothing: only the version the member was shown counts as read
    seen = services.guidelines_seen(project, request.user, version)
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"seen_version": seen})
    back_to = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        back_to, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back_to = work_url(project, ProjectMember.Role.ANNOTATOR)
    return redirect(back_to)


# ---------------------------------------------------------------- settings


class SettingsForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="Shown to annotators and on the dashboard.")
    description = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What the project is for, in a few sentences (Markdown). Annotators see it beside the guidelines.",
    )
    guidelines = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 12}),
        help_text="How to label (Markdown, with $math$). Saving a changed text makes a new version, which every "
        "annotator is shown on their next page load.",
    )
    labels_per_item = forms.IntegerField(min_value=1, max_value=10)
    tiebreak_annotators = forms.IntegerField(min_value=0, max_value=5, label="Tie-break annotators")
    agreement_threshold = forms.FloatField(
        min_value=0,
        help_text="For scores (proof grades): two scores agree when they differ by at most this much. "
        "Applies to decisions taken from now on.",
    )
    lease_minutes = forms.IntegerField(
        min_value=1, max_value=1440, help_text="How long an annotator holds an item; applies to new leases."
    )
    verdict_visibility = forms.ChoiceField(
        choices=AnnotationProject.VerdictVisibility.choices, help_text="Who sees automatic verdicts beside an item."
    )
    show_model_names = forms.BooleanField(required=False, help_text="Annotators see which model wrote a completion.")
    gold_rate = forms.FloatField(min_value=0, max_value=1, help_text="Share of tasks drawn from gold items (0 to 1).")
    is_active = forms.BooleanField(
        required=False, label="Open for labeling", help_text="A closed project hands out no task; nothing is lost."
    )
    # Not required: a form posted without them (an older page) keeps the project's values.
    aggregation = forms.ChoiceField(
        required=False,
        choices=AnnotationProject._meta.get_field("aggregation").choices,
        help_text="Majority reproduces the published protocols (two labels, a third on disagreement, a plain "
        "majority). The annotator model weighs each annotator by their estimated reliability (fitted "
        "on all labels, gold items as anchors) and records the final label's posterior confidence.",
    )
    adaptive_redundancy = forms.BooleanField(
        required=False,
        help_text="With the annotator model: ask for one label at a time and stop as soon as the "
        "item's posterior confidence reaches the target; verifier verdicts count as weak "
        "votes. Switch it before labeling starts, or once open items are settled.",
    )
    confidence_target = forms.FloatField(
        required=False,
        min_value=0.51,
        max_value=0.999,
        help_text="Posterior confidence at which an item stops asking for labels.",
    )
    max_labels = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=10,
        label="Label cap",
        help_text="Adaptive redundancy: human labels at most; an item still unsure then goes to adjudication.",
    )
    refit_every = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=100000,
        label="Refit after",
        help_text="New labels after which the annotator model is refitted in the background (0: only on demand, "
        "from the dashboard).",
    )

    def __init__(self, *args, situation: dict, project: AnnotationProject, **kwargs):
        super().__init__(*args, **kwargs)
        waiting, started = situation["waiting_tiebreak"], situation["first_round_started"]
        now = (
            f" Now: {waiting} item{'s' if waiting != 1 else ''} waiting for a tie-break, {started} in "
            f"{'their' if started != 1 else 'its'} first round with labels."
        )
        self.fields["labels_per_item"].help_text = (
            "Independent labels before an item can resolve by agreement. A change applies to the items still in "
            "their first round; resolved items, and items waiting for adjudication, keep theirs. It cannot change "
            "while items wait for a tie-break, and it cannot go down to a number some item has already reached." + now
        )
        self.fields["tiebreak_annotators"].help_text = (
            "Extra annotators asked when the first labels disagree; 0 sends disagreements to adjudication. A change "
            "applies to the items waiting for a tie-break; it cannot go down below what they already have." + now
        )
        if project.kind != PROOF_GRADE:
            self.fields[
                "agreement_threshold"
            ].help_text = "Used only for scores (proof grades); labels of this project agree when they are equal."
        if project.judgement.numeric:
            # scores follow the fixed protocol: the annotator model is for categorical labels
            for name in ("aggregation", "adaptive_redundancy", "confidence_target", "max_labels", "refit_every"):
                del self.fields[name]


def _settings_initial(project: AnnotationProject) -> dict:
    return {field: getattr(project, field) for field in (*services.SETTING_FIELDS, "guidelines")}


@login_required
@require_http_methods(["GET", "POST"])
def project_settings(request, project_id: int):
    project = _researcher_project(request.user, project_id)
    situation = selectors.policy_situation(project)
    form = SettingsForm(request.POST or None, initial=_settings_initial(project), situation=situation, project=project)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            values = dict(form.cleaned_data)
            guidelines = values.pop("guidelines")
            values = {
                k: v
                for k, v in values.items()
                if not (k in ("aggregation", "confidence_target", "max_labels", "refit_every") and v in ("", None))
            }
            try:
                services.update_project(project, actor=request.user, guidelines=guidelines, **values)
            except services.WorkflowError as exc:
                form.add_error(None, f"Nothing was saved: {exc}.")
                status = exc.status_code
            else:
                messages.success(request, "Settings saved.")
                return redirect("project-settings", project_id=project.pk)
        else:
            status = 400
    history = [
        {"version": version, "html": _rendered(version.text) if version.text else ""}
        for version in selectors.guidelines_history(project)
    ]
    return render(
        request,
        "dashboard/settings.html",
        {
            "project": project,
            "form": form,
            "guidelines_html": _rendered(project.guidelines) if project.guidelines else "",
            "history": history,
            "changes": selectors.recent_changes(project),
            "can_adjudicate": selectors.can_adjudicate(project, request.user),
        },
        status=status,
    )


# ---------------------------------------------------------------- members and invitations


MAX_PEOPLE_AT_ONCE = 200


def _candidates(project: AnnotationProject, role: str):
    """Active users with the role's group who are not already active members with that role."""
    current = ProjectMember.objects.filter(project=project, role=role, is_active=True).values("user_id")
    return (
        get_user_model()
        .objects.filter(groups__name=role, is_active=True)
        .exclude(pk__in=current)
        .order_by("username")
        .distinct()
    )


class AddMemberForm(forms.Form):
    """One per role (the template sends the role beside it): someone chosen among the people who have that role,
    or several people by username or e-mail address, or both."""

    user = forms.ModelChoiceField(
        queryset=get_user_model().objects.none(), label="Person", required=False, empty_label="Choose someone"
    )
    people = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "autocomplete": "off", "spellcheck": "false"}),
        label="Or several people",
        help_text="Usernames or e-mail addresses, one per line or separated by commas.",
    )

    def __init__(self, *args, project: AnnotationProject, role: str, **kwargs):
        super().__init__(*args, prefix=role, **kwargs)
        self.fields["user"].queryset = _candidates(project, role)

    def clean(self):
        cleaned = super().clean()
        if self.has_error("user"):
            return cleaned
        names = [cleaned["user"].get_username()] if cleaned.get("user") else []
        names += [name for name in re.split(r"[\s,;]+", cleaned.get("people", "")) if name]
        names = list(dict.fromkeys(names))
        if not names:
            self.add_error("people", "Choose someone, or type their usernames or e-mail addresses.")
        elif len(names) > MAX_PEOPLE_AT_ONCE:
            self.add_error("people", f"Add at most {MAX_PEOPLE_AT_ONCE} people at once.")
        cleaned["names"] = names
        return cleaned


class InvitationForm(forms.Form):
    role = forms.ChoiceField(choices=ProjectMember.Role.choices, initial=ProjectMember.Role.ANNOTATOR)
    days = forms.IntegerField(min_value=1, max_value=90, initial=services.INVITATION_DAYS, label="Valid for (days)")

    prefix = "invite"


class AccountForm(forms.Form):
    username = forms.CharField(
        max_length=150,
        help_text="Letters, digits and @/./+/-/_ only.",
        validators=[get_user_model().username_validator],
    )
    email = forms.EmailField(required=False, help_text="Optional; kept with the account.")
    days = forms.IntegerField(
        min_value=1, max_value=90, initial=services.INVITATION_DAYS, label="Password link valid for (days)"
    )

    prefix = "account"


_MEMBER_CHANGES = [
    kind
    for kind in ProjectChange.Kind.values
    if kind not in (ProjectChange.Kind.SETTINGS, ProjectChange.Kind.GUIDELINES)
]


def _members_page(
    request,
    project: AnnotationProject,
    *,
    status: int = 200,
    new_link: dict | None = None,
    forms_given: dict | None = None,
):
    forms_given = forms_given or {}
    add_forms = [
        {
            "role": role,
            "label": label,
            "form": forms_given.get(role) or AddMemberForm(project=project, role=role),
            "anyone_has_role": get_user_model().objects.filter(groups__name=role, is_active=True).exists(),
        }
        for role, label in ProjectMember.Role.choices
    ]
    return render(
        request,
        "dashboard/members.html",
        {
            "project": project,
            "rows": selectors.member_rows(project),
            "add_forms": add_forms,
            "invitation_form": forms_given.get("invite") or InvitationForm(),
            "account_form": forms_given.get("account") or AccountForm(),
            "invitations": selectors.invitations(project),
            "new_link": new_link,
            "changes": selectors.recent_changes(project, limit=15, kinds=_MEMBER_CHANGES),
            "can_adjudicate": selectors.can_adjudicate(project, request.user),
        },
        status=status,
    )


@login_required
@require_http_methods(["GET"])
def project_members(request, project_id: int):
    return _members_page(request, _researcher_project(request.user, project_id))


def _joined(names: list[str], conjunction: str = "and") -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {conjunction} {names[-1]}"


def _find_account(name: str):
    """The active account with this username, or else the one active account with this e-mail address (an address
    several accounts share names nobody in particular)."""
    accounts = get_user_model().objects.filter(is_active=True)
    user = accounts.filter(username=name).first()
    if user is None and "@" in name:
        sharing_the_address = list(accounts.filter(email__iexact=name)[:2])
        if len(sharing_the_address) == 1:
            user = sharing_the_address[0]
    return user


@dataclass
class MembersAdded:
    """What adding a list of people with one role did, person by person."""

    project: AnnotationProject
    role: str
    added: list[str] = field(default_factory=list)
    already_members: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    without_role: list[str] = field(default_factory=list)
    refusals: list[services.WorkflowError] = field(default_factory=list)

    def _about(self, names: list[str], one: str, several: str) -> str:
        return f"{_joined(names)} {one if len(names) == 1 else several}"

    def successes(self) -> list[tuple[int, str]]:
        role, project = self.role, self.project.name
        sentences = []
        if self.added:
            sentences.append(
                (
                    messages.SUCCESS,
                    self._about(self.added, f"is now an {role} on {project}.", f"are now {role}s on {project}."),
                )
            )
        if self.already_members:
            sentences.append(
                (
                    messages.INFO,
                    self._about(
                        self.already_members,
                        f"is already an {role} on {project}.",
                        f"are already {role}s on {project}.",
                    ),
                )
            )
        return sentences

    def problems(self) -> list[str]:
        sentences = []
        if self.unknown:
            sentences.append(
                f"No account was found for {_joined(self.unknown, 'or')}: check the spelling, or send an invitation "
                "link instead."
            )
        if self.without_role:
            sentences.append(
                self._about(
                    self.without_role, f"does not have the {self.role} role", f"do not have the {self.role} role"
                )
                + "; an invitation link gives it."
            )
        if self.refusals:
            sentences.append(" ".join(str(refused) for refused in self.refusals))
        return sentences

    @property
    def status(self) -> int:
        """The status of a request that added nobody: the input was wrong, or the workflow refused."""
        if self.unknown or self.without_role or not self.refusals:
            return 400
        return self.refusals[0].status_code


def _add_members(project: AnnotationProject, names: list[str], role: str, *, actor) -> MembersAdded:
    """Add each named person with the role through the same service and the same checks as adding one; a name that
    cannot be added is reported and the others are still added."""
    outcome = MembersAdded(project, role)
    seen: set[int] = set()
    for name in names:
        user = _find_account(name)
        if user is None:
            outcome.unknown.append(name)
            continue
        if user.pk in seen:  # named twice, by username and by e-mail address
            continue
        seen.add(user.pk)
        username = user.get_username()
        if services.is_member(project, user, role):
            outcome.already_members.append(username)
        elif not user.groups.filter(name=role).exists():
            outcome.without_role.append(username)
        else:
            try:
                services.add_member(project, user, role, actor=actor)
            except services.WorkflowError as refused:
                outcome.refusals.append(refused)
            else:
                outcome.added.append(username)
    return outcome


@login_required
@require_POST
def member_add(request, project_id: int):
    """Add one or several people with a role. When some are added (or already were members), the page they go back
    to says who was added and why the others were not; when nobody is, the form comes back with the reasons."""
    project = _researcher_project(request.user, project_id)
    role = request.POST.get("role", "")
    if role not in ProjectMember.Role.values:
        messages.error(request, "Choose whether to add an annotator or an adjudicator.")
        return redirect("project-members", project_id=project.pk)
    form = AddMemberForm(request.POST, project=project, role=role)
    if not form.is_valid():
        return _members_page(request, project, status=400, forms_given={role: form})
    outcome = _add_members(project, form.cleaned_data["names"], role, actor=request.user)
    if not outcome.added and not outcome.already_members:
        for sentence in outcome.problems():
            form.add_error("people", sentence)
        return _members_page(request, project, status=outcome.status, forms_given={role: form})
    for level, sentence in outcome.successes():
        messages.add_message(request, level, sentence)
    for sentence in outcome.problems():
        messages.error(request, sentence)
    return redirect("project-members", project_id=project.pk)


@login_required
@require_POST
def member_remove(request, project_id: int, member_id: int):
    project = _researcher_project(request.user, project_id)
    member = get_object_or_404(ProjectMember.objects.select_related("user"), pk=member_id, project=project)
    try:
        services.remove_member(member, actor=request.user)
    except services.WorkflowError as exc:
        messages.error(request, f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
    else:
        messages.success(
            request,
            f"{member.user.username} was removed as {member.get_role_display().lower()}; "
            "their labels stay and still count.",
        )
    return redirect("project-members", project_id=project.pk)


def _link(request, token: str) -> str:
    return request.build_absolute_uri(reverse("invitation", args=[token]))


@login_required
@require_POST
def invitation_create(request, project_id: int):
    """Make an invitation link and show it on the page this once (only its hash is kept)."""
    project = _researcher_project(request.user, project_id)
    form = InvitationForm(request.POST)
    if not form.is_valid():
        return _members_page(request, project, status=400, forms_given={"invite": form})
    invitation, token = services.create_invitation(
        project, role=form.cleaned_data["role"], days=form.cleaned_data["days"], actor=request.user
    )
    return _members_page(
        request, project, status=201, new_link={"url": _link(request, token), "invitation": invitation, "account": None}
    )


@login_required
@require_POST
def account_create(request, project_id: int):
    """Create an annotator account and show, this once, the link through which its owner chooses a password."""
    project = _researcher_project(request.user, project_id)
    form = AccountForm(request.POST)
    if form.is_valid():
        try:
            user, invitation, token = services.create_account(
                project,
                username=form.cleaned_data["username"],
                email=form.cleaned_data["email"],
                days=form.cleaned_data["days"],
                actor=request.user,
            )
        except services.WorkflowError as exc:
            form.add_error("username", f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
        else:
            return _members_page(
                request,
                project,
                status=201,
                new_link={"url": _link(request, token), "invitation": invitation, "account": user},
            )
    return _members_page(request, project, status=400, forms_given={"account": form})


@login_required
@require_POST
def invitation_revoke(request, project_id: int, invitation_id: int):
    project = _researcher_project(request.user, project_id)
    invitation = get_object_or_404(Invitation, pk=invitation_id, project=project)
    try:
        services.revoke_invitation(invitation, actor=request.user)
    except services.WorkflowError as exc:
        messages.error(request, f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
    else:
        messages.success(request, "The invitation link was revoked; it no longer works.")
    return redirect("project-members", project_id=project.pk)


# ---------------------------------------------------------------- the public invitation page


class SignUpForm(UserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional.")

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")


def _unusable(request, message: str, status: int):
    return render(request, "frontend/invitation.html", {"unusable": message}, status=status)


@require_http_methods(["GET", "POST"])
def invitation(request, token: str):
    """Open to anyone holding the link: sign up (or choose the password of the account the link was made for),
    or accept with the account already signed in. A link that cannot be used says why, and nothing else."""
    try:
        invitation = services.open_invitation(token)
    except services.InvitationUnusable as exc:
        return _unusable(request, str(exc), exc.status_code)
    project, account = invitation.project, invitation.account
    signed_in = request.user.is_authenticated
    form: forms.Form | None = None
    error, status = "", 200
    if account is not None:
        if signed_in and request.user.pk != account.pk:
            error = (
                f"This link lets the account {account.username} choose its password. You are signed in as "
                f"{request.user.get_username()}: log out first to use it."
            )
        else:
            form = SetPasswordForm(account, request.POST or None)
    elif not signed_in:
        form = SignUpForm(request.POST or None)
    if request.method == "POST" and not error:
        try:
            if form is None:
                services.accept_invitation(token, request.user)
                user = request.user
            elif form.is_valid():
                if account is not None:
                    user = services.set_password_with_invitation(token, password=form.cleaned_data["new_password1"])
                else:
                    user = services.sign_up_with_invitation(
                        token,
                        username=form.cleaned_data["username"],
                        password=form.cleaned_data["password1"],
                        email=form.cleaned_data.get("email") or "",
                    )
            else:
                user = None
        except services.InvitationUnusable as exc:
            return _unusable(request, str(exc), exc.status_code)
        except services.AlreadyMember as exc:
            messages.info(request, f"{str(exc)[:1].upper()}{str(exc)[1:]}; the link stays unused for someone else.")
            return redirect(work_url(project, invitation.role))
        except services.WorkflowError as exc:
            error, status = f"{str(exc)[:1].upper()}{str(exc)[1:]}.", exc.status_code
        else:
            if user is not None:
                if not signed_in:
                    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
                elif account is not None:
                    update_session_auth_hash(request, user)  # a new password would end this session otherwise
                messages.success(
                    request, f"Welcome to {project.name}. You are now an {invitation.get_role_display().lower()} here."
                )
                return redirect(work_url(project, invitation.role))
            status = 400
    return render(
        request,
        "frontend/invitation.html",
        {
            "invitation": invitation,
            "project": project,
            "account": account,
            "form": form,
            "error": error,
            "signed_in": signed_in,
            "login_url": f"{reverse('login')}?next={request.path}",
        },
        status=status,
    )
