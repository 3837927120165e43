import { Client } from "pg";

// node-postgres prepares a named query on the server connection.
export async function userById(client: Client, id: number) {
  return client.query({ name: "user-by-id", text: "SELECT * FROM users WHERE id = $1", values: [id] }); // want protocol-prepare:info
}

export async function unnamed(client: Client, id: number) {
  return client.query({ text: "SELECT * FROM users WHERE id = $1", values: [id] });
}

export async function notAQuery(store: Store) {
  return store.query({ name: "users", filter: { active: true } });
}
