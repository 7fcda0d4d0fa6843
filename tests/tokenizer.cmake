# Tokenizers (frontend/clgrad_tokenizer.h): round trips of every kind on random bytes and text,
# the serialised form, malformed forms, BPE against a slow reference learner. Host only, seconds.
clg_test(test_tokenizer)
