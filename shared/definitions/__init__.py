"""Definitions as code, the part both services share: reading a folder of YAML files into
documents, the plan a sync shows, and writing an export back in the same format. Each service's
`definitions` management command validates the documents with its own API serializers and
services; nothing here knows what a document means."""
