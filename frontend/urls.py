from django.contrib.auth import views as auth_views
from django.urls import include, path

from . import views, views_annotation, views_dashboard, views_evaluation, views_jobs

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(template_name="frontend/login.html", redirect_authenticated_user=True),
         name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("datasets/<int:dataset_id>/", views.dataset_detail, name="dataset-detail"),
    path("completions/<int:completion_id>/", views.completion_detail, name="completion-detail"),
    path("projects/", views_dashboard.project_list, name="dashboard-projects"),
    path("projects/new/", views_dashboard.project_new, name="dashboard-project-new"),
    path("projects/<int:project_id>/dashboard/", views_dashboard.dashboard, name="dashboard-project"),
    path("projects/<int:project_id>/label/", views_annotation.label_page, name="annotation-label"),
    path("projects/<int:project_id>/label/fragment/", views_annotation.label_fragment,
         name="annotation-label-fragment"),
    path("projects/<int:project_id>/conflicts/", views_annotation.conflicts_page, name="annotation-conflicts"),
    path("items/<int:item_id>/adjudicate/", views_annotation.adjudicate_page, name="annotation-adjudicate"),
    path("projects/<int:project_id>/meta-eval/", views_evaluation.meta_eval_page, name="meta-eval-page"),
    path("datasets/<int:dataset_id>/model-eval/", views_evaluation.model_eval_page, name="model-eval-page"),
    path("projects/<int:project_id>/runs/new/", views_jobs.project_run_new, name="jobs-project-run-new"),
    path("projects/<int:project_id>/exports/new/", views_jobs.project_export_new, name="jobs-project-export-new"),
    path("datasets/<int:dataset_id>/jobs/", views_jobs.dataset_jobs, name="jobs-dataset"),
    path("datasets/<int:dataset_id>/runs/new/", views_jobs.dataset_run_new, name="jobs-dataset-run-new"),
    path("datasets/<int:dataset_id>/select/", views_jobs.dataset_select, name="jobs-dataset-select"),
    path("selections/<int:selection_id>/", views_jobs.selection_report, name="jobs-selection"),
    path("runs/<int:run_id>/cancel/", views_jobs.run_cancel, name="jobs-run-cancel"),
    path("runs/<int:run_id>/resume/", views_jobs.run_resume, name="jobs-run-resume"),
    path("exports/<int:export_id>/cancel/", views_jobs.export_cancel, name="jobs-export-cancel"),
    path("exports/<int:export_id>/download/", views_jobs.export_download, name="jobs-export-download"),
    path("grading/", include("grading.urls")),
]
