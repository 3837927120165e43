// One query string: prepared, executed and deallocated in one implicit
// transaction on one server connection, so nothing is left behind.
export async function completeMany(client: Client, schema: string, ids: string[]) {
  await client.query({
    text: `\
prepare complete_job (bigint) as delete from ${schema}.jobs where id = $1;
${ids.map((id) => `execute complete_job(${id});`).join("\n")}
deallocate complete_job;`,
  });
}
