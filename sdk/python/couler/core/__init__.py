"""The workflow builder behind `couler.argo`: state, templates and syntax."""
