package app

class Repo(private val db: DataSource) {
    fun listen(channel: String) {
        db.connection.createStatement().execute("LISTEN $channel") // want listen
        println("LISTEN $channel")
        val q = """
            SELECT pg_backend_pid() -- want backend-pid
        """
        db.connection.createStatement().execute("DISCARD ALL") // want discard
    }
}
