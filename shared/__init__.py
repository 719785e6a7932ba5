"""Library shared by the case service and the orchestrator.

It never imports `casemgmt` or `orchestrator`: each service plugs its own models in.
"""
