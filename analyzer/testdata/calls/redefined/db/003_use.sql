SELECT sneaky();
