"""Proof-grading pages, included by frontend.urls under /grading/."""
from django.urls import path

from . import views

urlpatterns = [
    path("", views.proof_home, name="proof-home"),
    path("projects/<int:project_id>/next/", views.next_proof_task, name="proof-next"),
    path("tasks/<int:task_id>/", views.grade_page, name="proof-grade"),
    path("items/<int:item_id>/", views.conflict_page, name="proof-conflict"),
    path("competitions/<int:competition_id>/leaderboard/", views.leaderboard_page, name="proof-leaderboard"),
    path("competitions/<int:competition_id>/leaderboard.csv", views.leaderboard_csv, name="proof-leaderboard-csv"),
]
