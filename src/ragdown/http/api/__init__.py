"""The `/api` routes behind the web UI (behaviour spec A12).

Every `path` here includes its folder (`work/notes/a.md`). Each route sees only the folders its caller's
key sees (`access.access_of(request.scope)`, set by `app.py`, which also checks the route's role): every
other folder answers exactly as a missing one does, and lists leave it out. Writes go through the write
door (`writes/door.py`) as the tools' do, and answer after the index has synced. Every read checks, at the moment it reads, that
the path is a plain file inside its folder (`sandbox.read_plain`). Errors are `{error, code?}` with the
status `http/errors.py` gives the refusal's kind; anything else is a 500.
"""
