from django.contrib.auth import views as auth_views
from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(template_name="frontend/login.html", redirect_authenticated_user=True),
         name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("datasets/<int:dataset_id>/", views.dataset_detail, name="dataset-detail"),
    path("completions/<int:completion_id>/", views.completion_detail, name="completion-detail"),
]
