# Expected SQL in a spec is text to compare, not a statement sent.
describe "schema" do
  it "creates a temporary table" do
    @db.create_table(:t, temp: true) { Integer :id }
    @db.sqls.must_equal ["CREATE TEMPORARY TABLE t (id integer)"]
    expect(server.count_query("RESET ALL")).to eq(0)
    log_sql = "EXECUTE #{name}"
    @db.run("SET lock_timeout = 1") # want session-set:error
  end
end

# A test helper's arguments: text the code under test analyses.
assert_no_suggestion "SET statement", "set statement_timeout to 0"
refute_flagged "LISTEN events"
