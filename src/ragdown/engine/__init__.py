"""One docs dir's running index (the engine) and the server-wide state around the engines (the runtime)."""
