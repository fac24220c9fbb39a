print("photoboothd")
