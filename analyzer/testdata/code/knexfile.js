// Connection settings for every database the test suite runs against.
module.exports = {
  mysql: {
    pool: {
      afterCreate(connection, done) {
        connection.query("SET sql_mode='TRADITIONAL';", done);
      },
    },
  },
  postgres: {
    pool: {
      afterCreate(connection, done) {
        connection.query("SET statement_timeout = 5000", done); // want session-set
      },
    },
  },
};
