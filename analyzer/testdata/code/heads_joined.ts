export async function enter(client: Client, kind: string, key: number) {
  await client.query(`SELECT pg_advisory_${kind}(${key})`); // want advisory-lock-session:error
}
