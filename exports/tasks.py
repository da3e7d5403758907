from pathlib import Path

from celery import shared_task
from django.conf import settings

from exports.dataset import write_export

EXPORT_FOLDER = "exports"


@shared_task(acks_late=True)
def export_dataset_file(file_name: str, fmt: str = "json") -> dict:
    """Write the accepted claims to MEDIA_ROOT/exports/<file_name> in the background.

    Takes a bare file name, never a path, so a caller cannot write elsewhere on disk. Running
    it twice rewrites the same complete file, so a redelivered message does no harm.
    """
    if Path(file_name).name != file_name or not file_name:
        raise ValueError(f"expected a bare file name, got {file_name!r}")
    folder = Path(settings.MEDIA_ROOT) / EXPORT_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    count = write_export(folder / file_name, fmt=fmt)
    return {"file": f"{EXPORT_FOLDER}/{file_name}", "claims": count}
