from helpers import greeting

print(greeting("world"))
