defmodule MigratorTest do
  test "logs the commands it runs", %{output: output} do
    assert output =~ "execute ddl"
    refute output =~ "execute \"foo\""
  end

  @setup base_sql <>
           """
           SET password_encryption = 'scram-sha-256'; -- want session-set
           CREATE USER scram_user WITH PASSWORD 'secret';
           """
end

defmodule Runner do
  defp command(ddl) when is_binary(ddl), do: "execute #{inspect(ddl)}"
  def log(command), do: {:info, "execute ddl", %{command: command}}
  def explain(name), do: "EXECUTE #{name}(1)" # want sql-prepare
end
