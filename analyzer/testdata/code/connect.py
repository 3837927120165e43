import psycopg

conn = psycopg.connect("host=db dbname=app user=app options='-c search_path=tenant -c statement_timeout=5s'")  # want startup-parameter:error startup-parameter:error
other = psycopg.connect("host=db dbname=app options='-c DateStyle=ISO' application_name=worker")
engine = create_engine(f"postgresql+psycopg2://app:{password}@db/app?options=-csearch_path%3D{schema}")  # want startup-parameter:error
print("postgres://db/app?search_path=x is an example")
