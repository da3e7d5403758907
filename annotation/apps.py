from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from annotation.middleware import remember_sign_in

        user_logged_in.connect(remember_sign_in, dispatch_uid="annotation.remember_sign_in")
