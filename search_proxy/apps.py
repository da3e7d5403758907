from django.apps import AppConfig


class SearchProxyConfig(AppConfig):
    name = "search_proxy"
    verbose_name = "Search and web archive"
