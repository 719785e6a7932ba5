"""Backup archives for both services: a tar file (gzip, bzip2 or xz) holding a JSON manifest, the
service's metadata, a consistent database dump and any content-addressed files the database refers
to, each member listed in the manifest with its size and SHA-256.

Each service describes what it backs up with a `ServiceProfile`; this package never imports a
service.
"""
