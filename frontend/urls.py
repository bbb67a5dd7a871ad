from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import path
from django.views.generic import RedirectView

from . import (
    views,
    views_annotation,
    views_dashboard,
    views_evaluation,
    views_exports,
    views_grading,
    views_imports,
    views_items,
    views_verification,
    views_workspace,
)
from .jobs import views as job_views

urlpatterns = [
    path("", views.home, name="home"),
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="frontend/login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("datasets/<int:dataset_id>/", views.dataset_detail, name="dataset-detail"),
    path("datasets/import/", views_imports.import_page, name="dataset-import"),
    path("completions/<int:completion_id>/", views.completion_detail, name="completion-detail"),
    path("projects/", views_dashboard.project_list, name="dashboard-projects"),
    path("projects/new/", views_dashboard.project_new, name="dashboard-project-new"),
    path("projects/<int:project_id>/dashboard/", views_dashboard.dashboard, name="dashboard-project"),
    path(
        "projects/<int:project_id>/annotator-model/refit/",
        views_dashboard.refit_model,
        name="dashboard-project-refit-model",
    ),
    path("projects/<int:project_id>/settings/", views_workspace.project_settings, name="project-settings"),
    path("projects/<int:project_id>/members/", views_workspace.project_members, name="project-members"),
    path("projects/<int:project_id>/members/add/", views_workspace.member_add, name="project-member-add"),
    path(
        "projects/<int:project_id>/members/<int:member_id>/remove/",
        views_workspace.member_remove,
        name="project-member-remove",
    ),
    path("projects/<int:project_id>/members/accounts/", views_workspace.account_create, name="project-account-new"),
    path("projects/<int:project_id>/invitations/", views_workspace.invitation_create, name="project-invitation-new"),
    path(
        "projects/<int:project_id>/invitations/<int:invitation_id>/revoke/",
        views_workspace.invitation_revoke,
        name="project-invitation-revoke",
    ),
    path("projects/<int:project_id>/guidelines/seen/", views_workspace.guidelines_seen, name="project-guidelines-seen"),
    path("invite/<str:token>/", views_workspace.invitation, name="invitation"),
    path("projects/<int:project_id>/label/", views_annotation.label_page, name="annotation-label"),
    path(
        "projects/<int:project_id>/label/fragment/", views_annotation.label_fragment, name="annotation-label-fragment"
    ),
    path("projects/<int:project_id>/label/queue/", views_annotation.label_queue, name="annotation-label-queue"),
    path("projects/<int:project_id>/label/release/", views_annotation.label_release, name="annotation-label-release"),
    path("projects/<int:project_id>/conflicts/", views_annotation.conflicts_page, name="annotation-conflicts"),
    path("projects/<int:project_id>/items/", views_items.item_browser, name="item-browser"),
    path("projects/<int:project_id>/items/bulk/", views_items.item_bulk, name="item-bulk"),
    path("items/<int:item_id>/", views_items.item_detail, name="item-detail"),
    path("items/<int:item_id>/adjudicate/", views_annotation.adjudicate_page, name="annotation-adjudicate"),
    path("projects/<int:project_id>/meta-eval/", views_evaluation.meta_eval_page, name="meta-eval-page"),
    path("datasets/<int:dataset_id>/model-eval/", views_evaluation.model_eval_page, name="model-eval-page"),
    path("projects/<int:project_id>/runs/new/", views_verification.project_run_new, name="jobs-project-run-new"),
    path("projects/<int:project_id>/exports/new/", views_exports.project_export_new, name="jobs-project-export-new"),
    path("datasets/<int:dataset_id>/jobs/", views_verification.dataset_jobs, name="jobs-dataset"),
    path("datasets/<int:dataset_id>/runs/new/", views_verification.dataset_run_new, name="jobs-dataset-run-new"),
    path("datasets/<int:dataset_id>/select/", views_verification.dataset_select, name="jobs-dataset-select"),
    path("selections/<int:selection_id>/", views_verification.selection_report, name="jobs-selection"),
    path("jobs/", job_views.jobs_page, name="jobs"),
    path("jobs/<slug:kind>/<int:job_id>/", job_views.job_detail, name="job-detail"),
    path("jobs/<slug:kind>/<int:job_id>/<slug:action>/", job_views.job_action, name="job-action"),
    path(
        "runs/<int:job_id>/cancel/",
        job_views.job_action,
        {"kind": "verification-run", "action": "cancel"},
        name="jobs-run-cancel",
    ),
    path(
        "runs/<int:job_id>/resume/",
        job_views.job_action,
        {"kind": "verification-run", "action": "resume"},
        name="jobs-run-resume",
    ),
    path(
        "exports/<int:job_id>/cancel/",
        job_views.job_action,
        {"kind": "export", "action": "cancel"},
        name="jobs-export-cancel",
    ),
    path("exports/<int:export_id>/download/", views_exports.export_download, name="jobs-export-download"),
    path("grading/", views_grading.proof_home, name="proof-home"),
    path("grading/projects/<int:project_id>/next/", views_grading.next_proof_task, name="proof-next"),
    path("grading/tasks/<int:task_id>/", views_grading.grade_page, name="proof-grade"),
    path("grading/items/<int:item_id>/", views_grading.conflict_page, name="proof-conflict"),
    path(
        "grading/competitions/<int:competition_id>/leaderboard/",
        views_grading.leaderboard_page,
        name="proof-leaderboard",
    ),
    path(
        "grading/competitions/<int:competition_id>/leaderboard.csv",
        views_grading.leaderboard_csv,
        name="proof-leaderboard-csv",
    ),
]
