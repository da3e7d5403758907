from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from annotation.views import site
from config.api import no_such_endpoint

urlpatterns = [
    path("", site.home, name="home"),
    path("signed-in/", site.signed_in, name="signed-in"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", site.SignOut.as_view(), name="logout"),
    path("password/", site.PasswordChange.as_view(), name="password_change"),
    path("annotate/", include("annotation.urls")),
    path("exports/", include("exports.urls")),
    path("review/", include("review.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/search/", include("annotation.search_urls")),
    path("api/v1/", include("annotation.api_urls")),
    path("api/v1/", include("exports.api_urls")),
    path("api/v1/", include("review.api_urls")),
    path("api/v1/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its start-up script as a file of its own: no inline script (CSP).
    path(
        "api/v1/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api/docs.html"),
        name="api-docs",
    ),
    re_path(r"^api/(?P<rest>[\s\S]*)$", no_such_endpoint),
    path("healthz", site.health, name="health"),
]

handler400 = "config.views.bad_request"
