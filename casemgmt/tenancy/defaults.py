"""What a new tenant starts with: four themes, four roles, default terminology and branding."""

DEFAULT_THEMES = [
    ("Light", True, {"--color-bg": "#ffffff", "--color-fg": "#1f2933", "--color-primary": "#2563eb", "--color-surface": "#f5f7fa"}),
    ("Dark", False, {"--color-bg": "#111827", "--color-fg": "#f9fafb", "--color-primary": "#60a5fa", "--color-surface": "#1f2937"}),
    ("High Contrast Light", False, {"--color-bg": "#ffffff", "--color-fg": "#000000", "--color-primary": "#0000cc", "--color-surface": "#ffffff"}),
    ("High Contrast Dark", False, {"--color-bg": "#000000", "--color-fg": "#ffffff", "--color-primary": "#ffff00", "--color-surface": "#000000"}),
]  # fmt: skip

DEFAULT_COLORS = {"primary": "#2563eb", "secondary": "#64748b", "accent": "#f59e0b"}
