"""The App Home tab (issue 20 point 3): each person's inbox of pauses waiting for them
and their recent questions (and, for workspace admins, the channels' settings),
published with `views.publish` when it changes."""
