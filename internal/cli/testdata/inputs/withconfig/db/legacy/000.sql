LISTEN old_channel;
