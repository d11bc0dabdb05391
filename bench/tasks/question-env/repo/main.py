from db import connection_string, pool_size

print(connection_string(), pool_size())
