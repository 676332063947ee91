//! The test fixture starts a real Redis.

#[test]
fn a_redis_server_starts_and_answers() {
    let redis = mcp_test_support::redis::RedisServer::start();
    assert_eq!(redis.command("PING"), "+PONG");
}
