pub struct ReplyStream;
