export async function completeMany(client: Client, schema: string, ids: string[]) {
  await client.query({
    text: `\
prepare complete_job (bigint) as delete from ${schema}.jobs where id = $1; -- want sql-prepare
${ids.map((id) => `execute complete_job(${id});`).join("\n")}
deallocate complete_job;`, // want sql-prepare
  });
}
