print("photoboothctl")
