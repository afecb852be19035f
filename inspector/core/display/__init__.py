"""Pure helpers for views: overlap segments, offset conversion, the settings schema."""
