from helpres import greeting

print(greeting("world"))
