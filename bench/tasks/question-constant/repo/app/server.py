from app.limits import MAX_FILES, MAX_UPLOAD_MB


def accept(size_mb, count):
    return size_mb <= MAX_UPLOAD_MB and count <= MAX_FILES
