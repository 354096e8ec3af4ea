"""The docs dir on disk: its folders and their settings, which files count, the walk, the sandbox, quotas."""
