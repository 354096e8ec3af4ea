"""The `ragdown` command: the server's commands, `ragdown keys`, and the client of a server elsewhere."""
